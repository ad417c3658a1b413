SELECT p_partkey, p_name FROM part WHERE p_name >= 'lemon' AND p_name < 'lemoo' AND p_partkey < 2000 ORDER BY p_partkey
