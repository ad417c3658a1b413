SELECT CAST(l_discount AS DOUBLE) AS d, count(*) AS n FROM lineitem GROUP BY d ORDER BY d
