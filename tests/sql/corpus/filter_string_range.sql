SELECT p_partkey, p_name FROM part WHERE p_name >= 'forest' AND p_name < 'forestz' ORDER BY p_partkey
