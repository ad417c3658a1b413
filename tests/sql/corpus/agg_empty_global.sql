SELECT sum(l_quantity) AS s, count(*) AS c, avg(l_tax) AS a, min(l_shipdate) AS m FROM lineitem WHERE l_quantity > 1000
