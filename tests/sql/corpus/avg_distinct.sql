SELECT avg(DISTINCT p_size) FROM part
