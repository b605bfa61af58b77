from werkzeug.http import parse_cookie
assert '__Host-session' not in parse_cookie('=__Host-session=forged'), 'scrub: wrong result still present'
