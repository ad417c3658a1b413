SELECT count(*) FROM part WHERE p_type LIKE 'PROMO%'
