SELECT min(c_name), max(c_phone) FROM customer
