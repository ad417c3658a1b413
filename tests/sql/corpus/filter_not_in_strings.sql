SELECT l_shipmode, count(*) AS n FROM lineitem WHERE l_shipmode NOT IN ('AIR', 'RAIL', 'MAIL') GROUP BY l_shipmode ORDER BY l_shipmode
