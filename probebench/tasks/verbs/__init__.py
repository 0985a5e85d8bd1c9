"""The bilingual (EN/ES) verb-grammar probe set: schema, checks, rendering, generator."""
