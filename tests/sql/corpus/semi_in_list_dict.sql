SELECT count(*) FROM lineitem WHERE l_shipinstruct IN ('NONE', 'TAKE BACK RETURN')
