SELECT p_name, strpos(p_name, 'green') AS pos FROM part WHERE p_partkey < 15 ORDER BY p_partkey
