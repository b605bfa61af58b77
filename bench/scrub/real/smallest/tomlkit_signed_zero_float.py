import tomlkit
doc = tomlkit.parse('x = -1.5')
doc['x'] = doc['x'] * 0
tomlkit.parse(tomlkit.dumps(doc))
