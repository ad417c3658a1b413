SELECT c_custkey FROM customer WHERE c_name = 'Customer#000000042'
