SELECT l_orderkey, l_linenumber, greatest(l_shipdate, l_commitdate) AS g, least(l_quantity, 10) AS lq FROM lineitem WHERE l_orderkey < 10 ORDER BY 1, 2
