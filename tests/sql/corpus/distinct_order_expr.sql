SELECT DISTINCT p_size FROM part WHERE p_size < 10 ORDER BY p_size DESC
