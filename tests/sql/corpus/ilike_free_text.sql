SELECT count(*) FROM customer WHERE c_comment ILIKE '%REGULAR%' AND c_name NOT ILIKE 'customer#0000001%'
