SELECT 'all' AS g, count(*) AS n FROM region GROUP BY g
