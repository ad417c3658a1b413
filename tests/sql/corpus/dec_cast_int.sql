SELECT CAST(sum(l_quantity) AS BIGINT) AS q, CAST(avg(l_quantity) AS DECIMAL(10,1)) AS a FROM lineitem
