SELECT r_name, 42 AS answer, 'x' AS tag, 1.5 AS d FROM region ORDER BY r_name
