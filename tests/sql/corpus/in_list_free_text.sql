SELECT c_custkey FROM customer WHERE c_name IN ('Customer#000000001', 'Customer#000000007', 'nobody') ORDER BY 1
