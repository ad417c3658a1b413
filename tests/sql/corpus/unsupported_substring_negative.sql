SELECT substring(c_phone, -3, 2) AS tail, count(*) AS n FROM customer GROUP BY 1 ORDER BY 1
