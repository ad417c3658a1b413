SELECT count(*) FROM orders WHERE CASE WHEN o_orderstatus = 'F' THEN o_totalprice > 300000 ELSE false END
