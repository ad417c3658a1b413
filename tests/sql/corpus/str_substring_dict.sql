SELECT substring(p_type, 1, 5) AS t, count(*) AS n FROM part GROUP BY t ORDER BY t
