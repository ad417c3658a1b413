SELECT p_size % 5 AS bucket, count(*) AS n FROM part GROUP BY bucket ORDER BY bucket
