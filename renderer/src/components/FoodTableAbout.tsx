import './FoodTableAbout.css';

/**
 * Where the numbers of the food table come from and under what licence (issue 8 §1: shown in the
 * app as well as in docs/foods.md, which has the full provenance table). Kept in step with
 * docs/foods.md by hand: the table ships with the app and changes only with a release.
 */
export function FoodTableAbout() {
  return (
    <details className="about-foods" data-testid="about-foods">
      <summary>About the food table</summary>
      <div className="about-foods__body">
        <p>
          Chyme’s food table is on this computer: searching it sends nothing anywhere. Nutrients are per 100 g of the
          edible part; a blank nutrient is unknown for that food, not zero. Household portions (1 cup, 1 medium banana)
          come with their weight in grams.
        </p>
        <table className="about-foods__table">
          <caption className="visually-hidden">Sources of the food table</caption>
          <thead>
            <tr>
              <th scope="col">Source</th>
              <th scope="col">What it gives</th>
              <th scope="col">Licence</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>USDA National Nutrient Database for Standard Reference (SR Legacy)</td>
              <td>Generic foods: energy, protein, carbohydrate, fat, fibre, sugars, sodium, caffeine; household portions with gram weights</td>
              <td>Public domain (U.S. government work)</td>
            </tr>
            <tr>
              <td>Your own foods</td>
              <td>What you enter; kept only in your database</td>
              <td>Yours</td>
            </tr>
          </tbody>
        </table>
        <p className="about-foods__credit">
          Credit: U.S. Department of Agriculture, Agricultural Research Service. USDA National Nutrient Database for
          Standard Reference. How the table is rebuilt from its sources: <code>docs/foods.md</code>.
        </p>
      </div>
    </details>
  );
}
