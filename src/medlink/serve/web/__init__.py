"""The web page the service serves at ``/`` for people: link terms, browse a concept, match a patient to trials and
normalize a trial record. Server-rendered (a shared ``?q=`` URL shows its results without JavaScript), offline (no
CDN, font or script from elsewhere), everything escaped, under a strict Content-Security-Policy."""
