SELECT count(*) FROM lineitem WHERE l_tax = 0.08 AND l_discount > 0.095
