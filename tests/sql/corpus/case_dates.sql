SELECT count(*) FROM lineitem WHERE CASE WHEN l_shipmode = 'AIR' THEN l_shipdate ELSE l_commitdate END < DATE '1993-01-01'
