SELECT left(p_brand, 5) AS l, right(p_brand, 2) AS r, count(*) AS n FROM part GROUP BY 1, 2 ORDER BY 1, 2
