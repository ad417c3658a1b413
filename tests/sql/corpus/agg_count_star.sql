SELECT count(*) FROM lineitem
