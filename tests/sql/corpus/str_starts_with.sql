SELECT count(*) FROM customer WHERE starts_with(c_phone, '13')
