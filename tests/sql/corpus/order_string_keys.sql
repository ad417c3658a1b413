SELECT p_type, count(*) AS n FROM part GROUP BY p_type ORDER BY p_type DESC
