from multipart.multipart import parse_options_header
parse_options_header('a/b; !="' + '\\' * 50)
