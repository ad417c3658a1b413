SELECT CAST(o_orderdate AS VARCHAR) AS d FROM orders WHERE o_orderkey < 10 ORDER BY 1
