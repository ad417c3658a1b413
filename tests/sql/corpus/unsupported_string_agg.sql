SELECT string_agg(r_name, ',') FROM region
