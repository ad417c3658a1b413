SELECT count(*) FROM part WHERE contains(p_name, 'rose')
