SELECT count(*) FROM part WHERE p_type ILIKE '%brass'
