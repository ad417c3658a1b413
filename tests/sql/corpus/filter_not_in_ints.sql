SELECT count(*) AS c FROM part WHERE p_size NOT IN (1, 2, 3, 4, 5)
