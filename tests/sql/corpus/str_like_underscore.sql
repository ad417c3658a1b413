SELECT count(*) FROM part WHERE p_container LIKE 'SM _ASE'
