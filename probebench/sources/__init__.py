"""Where an artifact's bytes come from: the URL grammar (``urls``), a local folder
(``landing``), the Hugging Face Hub (``hub``) and GitHub (``github``); ``resolve`` picks
one. Imports nothing of probebench above the vocabulary floor."""
