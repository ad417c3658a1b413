SELECT length(p_name) AS l, count(*) AS n FROM part GROUP BY l ORDER BY l
