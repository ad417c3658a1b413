SELECT substring(c_phone, 1, 2) AS cc, count(*) AS n FROM customer GROUP BY cc ORDER BY cc
