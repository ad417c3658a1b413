SELECT count(*) FROM customer c1 JOIN customer c2 ON c1.c_phone = c2.c_phone
