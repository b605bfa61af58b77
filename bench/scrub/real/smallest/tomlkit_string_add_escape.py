import tomlkit
doc = tomlkit.parse('m = "a"')
doc['m'] = doc['m'] + '"'
tomlkit.parse(tomlkit.dumps(doc))
