SELECT count(*) FROM lineitem WHERE l_discount NOT BETWEEN 0.02 AND 0.08
