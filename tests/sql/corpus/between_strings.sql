SELECT count(*) FROM part WHERE p_brand BETWEEN 'Brand#12' AND 'Brand#21'
