SELECT lower(r_name) AS lo, upper(lower(r_name)) AS up FROM region ORDER BY lo
