-- in_digit_strings.sql: IN over free text with same-length digit constants
-- (translated as a length test and an integer IN; Q22's country codes):
-- substrings holding a '-' or a space, and leading characters that parse.
SELECT substring(c_phone, 1, 2) AS cc, substring(c_phone, 3, 3) AS mid, count(*) AS n
FROM customer
WHERE substring(c_phone, 1, 2) IN ('13', '31', '23', '29')
   OR substring(c_phone, 3, 3) IN ('-12', '123', '999')
   OR substring(c_address, 1, 1) IN ('1', '2', '9')
GROUP BY ALL
ORDER BY ALL
