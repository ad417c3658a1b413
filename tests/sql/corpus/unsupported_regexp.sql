SELECT count(*) FROM part WHERE regexp_matches(p_name, '^a.*z$')
