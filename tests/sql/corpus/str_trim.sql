SELECT DISTINCT trim(p_container) AS c FROM part ORDER BY c
