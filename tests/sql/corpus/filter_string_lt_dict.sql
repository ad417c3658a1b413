SELECT count(*) FROM customer WHERE c_mktsegment < 'FURNITURE'
