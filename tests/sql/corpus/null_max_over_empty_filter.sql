SELECT max(l_extendedprice) AS m, sum(l_quantity) AS s, count(DISTINCT l_partkey) AS d FROM lineitem WHERE l_shipdate < DATE '1900-01-01'
