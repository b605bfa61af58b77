import tomlkit
tomlkit.parse('x = 0E2')
