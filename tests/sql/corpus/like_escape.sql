SELECT count(*) FROM part WHERE p_name LIKE '%a\_%' ESCAPE '\'
