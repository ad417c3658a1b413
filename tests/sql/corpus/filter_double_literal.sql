SELECT count(*) FROM part WHERE p_retailprice > 1999.5
